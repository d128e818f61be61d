fn main() {
    bpf::skeleton("solisten");
}
