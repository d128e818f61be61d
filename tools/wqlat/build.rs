fn main() {
    bpf::skeleton("wqlat");
}
