fn main() {
    bpf::skeleton("trace");
}
