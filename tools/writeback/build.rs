fn main() {
    bpf::skeleton("writeback");
}
