fn main() {
    bpf::skeleton("swapin");
}
