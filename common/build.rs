fn main() {
    bpf::skeleton("common");
}
