fn main() {
    bpf::skeleton("exitsnoop");
}
