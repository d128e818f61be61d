fn main() {
    bpf::skeleton("mountsnoop");
}
