fn main() {
    bpf::skeleton("runqlat");
}
