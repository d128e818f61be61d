fn main() {
    bpf::skeleton("threadsnoop");
}
