fn main() {
    bpf::skeleton("dcstat");
}
