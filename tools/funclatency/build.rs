fn main() {
    bpf::skeleton("funclatency");
}
