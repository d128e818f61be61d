fn main() {
    bpf::skeleton("memleak");
}
