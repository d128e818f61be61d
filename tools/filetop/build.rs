fn main() {
    bpf::skeleton("filetop");
}
