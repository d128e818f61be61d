fn main() {
    bpf::skeleton("bitesize");
}
