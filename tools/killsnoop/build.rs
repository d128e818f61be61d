fn main() {
    bpf::skeleton("killsnoop");
}
