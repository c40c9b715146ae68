/* Heap allocation sites and a linked list built from one of them. */

typedef __SIZE_TYPE__ size_t;
void *malloc(size_t size);

struct node {
    int value;
    struct node *next;
};

struct node *push(struct node *head, int value) {
    struct node *n = malloc(sizeof *n);
    n->value = value;
    n->next = head;
    return n;
}

int sum(struct node *list) {
    int total = 0;
    for (struct node *cur = list; cur; cur = cur->next)
        total += cur->value;
    return total;
}

int main(void) {
    struct node *list = 0;
    for (int i = 0; i < 10; i++)
        list = push(list, i);
    int *a = malloc(sizeof(int));
    int *b = malloc(sizeof(int));
    *a = sum(list);
    *b = *a;
    return *b;
}
