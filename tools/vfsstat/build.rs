fn main() {
    bpf::skeleton("vfsstat");
}
