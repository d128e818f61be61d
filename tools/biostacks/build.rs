fn main() {
    bpf::skeleton("biostacks");
}
