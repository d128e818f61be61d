fn main() {
    bpf::skeleton("fsdist");
}
