fn main() {
    bpf::skeleton("sofdsnoop");
}
