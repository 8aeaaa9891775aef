import { sql, type RawBuilder } from 'kysely';

/** A subquery of the given categories' ids and those of all their descendants. */
export function categorySubtree(rootIds: number[]): RawBuilder<number> {
  return sql<number>`(with recursive subtree(id) as (
    select id from categories where id in (${sql.join(rootIds)})
    union select c.id from categories c join subtree s on c.parent_id = s.id
  ) select id from subtree)`;
}
