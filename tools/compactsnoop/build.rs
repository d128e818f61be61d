fn main() {
    bpf::skeleton("compactsnoop");
}
