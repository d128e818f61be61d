fn main() {
    bpf::skeleton("execsnoop");
}
