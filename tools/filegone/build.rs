fn main() {
    bpf::skeleton("filegone");
}
