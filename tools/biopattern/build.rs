fn main() {
    bpf::skeleton("biopattern");
}
