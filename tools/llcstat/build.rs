fn main() {
    bpf::skeleton("llcstat");
}
