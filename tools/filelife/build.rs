fn main() {
    bpf::skeleton("filelife");
}
