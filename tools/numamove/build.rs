fn main() {
    bpf::skeleton("numamove");
}
