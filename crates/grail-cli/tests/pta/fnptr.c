/* Function pointers: returned, stored in a table, and called indirectly. */

int counter;

int *identity(int *p) {
    return p;
}

int *to_counter(int *p) {
    (void)p;
    return &counter;
}

/* Called only directly: its parameter sees only what its direct caller passes. */
int *direct_only(int *p) {
    return p;
}

int *(*pick(int k))(int *) {
    return k ? identity : to_counter;
}

static void hello(void) {}
static void bye(void) {}
void (*actions[2])(void) = {hello, bye};

int main(void) {
    int a = 1, b = 2;
    int *(*fp)(int *) = pick(a);
    int *r = fp(&a);
    int *d = direct_only(&b);
    for (int i = 0; i < 2; i++)
        actions[i]();
    void (*act)(void) = actions[0];
    act();
    return *r + *d;
}
