fn main() {
    bpf::skeleton("funccount");
}
