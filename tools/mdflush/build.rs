fn main() {
    bpf::skeleton("mdflush");
}
