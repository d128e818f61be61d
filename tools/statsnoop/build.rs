fn main() {
    bpf::skeleton("statsnoop");
}
