fn main() {
    bpf::skeleton("offcputime");
}
