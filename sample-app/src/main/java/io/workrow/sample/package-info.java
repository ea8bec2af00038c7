/**
 * The sample shop: {@code order} takes orders, {@code receipt} sends their receipts through Workrow.
 */
package io.workrow.sample;
