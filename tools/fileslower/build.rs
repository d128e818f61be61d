fn main() {
    bpf::skeleton("fileslower");
}
