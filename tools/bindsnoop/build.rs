fn main() {
    bpf::skeleton("bindsnoop");
}
