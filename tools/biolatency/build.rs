fn main() {
    bpf::skeleton("biolatency");
}
