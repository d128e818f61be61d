fn main() {
    bpf::skeleton("profile");
}
