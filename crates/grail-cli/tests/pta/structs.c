/* Structs: fields are not told apart, struct copies carry their pointers. */

struct pair {
    int *first;
    int *second;
};

struct holder {
    struct pair *pair;
    int tag;
};

int main(void) {
    int x = 1, y = 2, w = 3;
    struct pair s;
    s.first = &x;
    s.second = &y;
    int *f = s.first;
    struct pair t = s;
    int *g = t.second;
    struct holder h = {&s, 0};
    struct pair *ps = h.pair;
    ps->second = &w;
    int *k = ps->first;
    return *f + *g + *k;
}
