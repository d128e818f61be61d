fn main() {
    bpf::skeleton("runqslower");
}
