fn main() {
    bpf::skeleton("oomkill");
}
