fn main() {
    bpf::skeleton("drsnoop");
}
