fn main() {
    bpf::skeleton("biotop");
}
