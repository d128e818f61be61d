fn main() {
    bpf::skeleton("cpudist");
}
