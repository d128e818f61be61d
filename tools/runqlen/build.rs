fn main() {
    bpf::skeleton("runqlen");
}
