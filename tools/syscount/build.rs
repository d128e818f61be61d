fn main() {
    bpf::skeleton("syscount");
}
