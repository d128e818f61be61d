fn main() {
    bpf::skeleton("hardirqs");
}
