fn main() {
    bpf::skeleton("offwaketime");
}
