fn main() {
    bpf::skeleton("futexctn");
}
