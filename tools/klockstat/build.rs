fn main() {
    bpf::skeleton("klockstat");
}
