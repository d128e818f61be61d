fn main() {
    bpf::skeleton("stackcount");
}
