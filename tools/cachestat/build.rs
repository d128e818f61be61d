fn main() {
    bpf::skeleton("cachestat");
}
