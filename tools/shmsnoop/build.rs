fn main() {
    bpf::skeleton("shmsnoop");
}
