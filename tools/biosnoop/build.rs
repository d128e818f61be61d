fn main() {
    bpf::skeleton("biosnoop");
}
