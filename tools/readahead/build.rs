fn main() {
    bpf::skeleton("readahead");
}
